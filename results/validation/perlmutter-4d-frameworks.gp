set terminal svg size 760,460 dynamic font 'sans,11'
set output 'perlmutter-4d-frameworks.svg'
set title 'perlmutter-4d-frameworks: GPT weak scaling on Perlmutter by framework (AxoNN 4-D, Megatron-LM), % of peak half-precision flop/s' noenhanced
set key top left
set grid
$data << EOD
67 67 67 67 36.5986
63 63 63 63 43.0195
67 67 67 67 48.2181
64 64 64 64 43.6561
57 57 57 57 36.4316
37 37 37 37 29.2363
42 42 42 42 33.4719
42 42 42 42 38.4063
44 44 44 44 42.6117
42 42 42 42 46.7858
EOD
set xrange [0:77.05]
set yrange [0:77.05]
set size square
set xlabel 'published percent_of_peak' noenhanced
set ylabel 'predicted percent_of_peak' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
