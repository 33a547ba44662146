set terminal svg size 760,460 dynamic font 'sans,11'
set output 'perlmutter-4d-frameworks.svg'
set title 'perlmutter-4d-frameworks: GPT weak scaling on Perlmutter by framework (AxoNN 4-D, Megatron-LM), % of peak half-precision flop/s' noenhanced
set key top left
set grid
$data << EOD
67 67 67 67 37.3313
63 63 63 63 43.8383
67 67 67 67 50.0585
64 64 64 64 47.4769
57 57 57 57 40.3522
37 37 37 37 27.6584
42 42 42 42 32.3535
42 42 42 42 39.1161
44 44 44 44 43.779
42 42 42 42 49.07
EOD
set xrange [0:77.05]
set yrange [0:77.05]
set size square
set xlabel 'published percent_of_peak' noenhanced
set ylabel 'predicted percent_of_peak' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
