set terminal svg size 760,460 dynamic font 'sans,11'
set output 'perlmutter-4d-frameworks.svg'
set title 'perlmutter-4d-frameworks: GPT weak scaling on Perlmutter by framework (AxoNN 4-D, Megatron-LM), % of peak half-precision flop/s' noenhanced
set key top left
set grid
$data << EOD
67 67 67 67 30.1608
63 63 63 63 30.9754
67 67 67 67 29.4146
64 64 64 64 31.5863
57 57 57 57 28.9552
37 37 37 37 20.5891
42 42 42 42 23.3895
42 42 42 42 28.549
44 44 44 44 32.6201
42 42 42 42 37.8772
EOD
set xrange [0:77.05]
set yrange [0:77.05]
set size square
set xlabel 'published percent_of_peak' noenhanced
set ylabel 'predicted percent_of_peak' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
