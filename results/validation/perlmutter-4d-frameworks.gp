set terminal svg size 760,460 dynamic font 'sans,11'
set output 'perlmutter-4d-frameworks.svg'
set title 'perlmutter-4d-frameworks: GPT weak scaling on Perlmutter by framework (AxoNN 4-D, Megatron-LM), % of peak half-precision flop/s' noenhanced
set key top left
set grid
$data << EOD
67 67 67 67 72.5152
63 63 63 63 67.5675
67 67 67 67 61.6196
64 64 64 64 51.3804
57 57 57 57 44.7445
37 37 37 37 36.5269
42 42 42 42 39.6161
42 42 42 42 41.9168
44 44 44 44 41.2062
42 42 42 42 37.3432
EOD
set xrange [0:83.3924]
set yrange [0:83.3924]
set size square
set xlabel 'published percent_of_peak' noenhanced
set ylabel 'predicted percent_of_peak' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
