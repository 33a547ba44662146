set terminal svg size 760,460 dynamic font 'sans,11'
set output 'selene-megatron-2022.svg'
set title 'selene-megatron-2022: Megatron-LM 2022 (sequence parallelism, selective recomputation) on Selene, seconds per iteration' noenhanced
set key top left
set grid
$data << EOD
1.1 1.1 1.1 1.1 1.09923
1.42 1.42 1.42 1.42 1.44096
13.75 13.75 13.75 13.75 14.8096
18.13 18.13 18.13 18.13 19.7334
37.83 37.83 37.83 37.83 40.9023
49.05 49.05 49.05 49.05 53.9459
71.49 71.49 71.49 71.49 76.7442
94.42 94.42 94.42 94.42 100.932
EOD
set logscale xy
set xrange [0.732818:116.072]
set yrange [0.732818:116.072]
set size square
set xlabel 'published iteration_s' noenhanced
set ylabel 'predicted iteration_s' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
