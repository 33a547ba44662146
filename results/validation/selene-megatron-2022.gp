set terminal svg size 760,460 dynamic font 'sans,11'
set output 'selene-megatron-2022.svg'
set title 'selene-megatron-2022: Megatron-LM 2022 (sequence parallelism, selective recomputation) on Selene, seconds per iteration' noenhanced
set key top left
set grid
$data << EOD
1.1 1.1 1.1 1.1 1.09859
1.42 1.42 1.42 1.42 1.43659
13.75 13.75 13.75 13.75 14.767
18.13 18.13 18.13 18.13 19.6357
37.83 37.83 37.83 37.83 40.6518
49.05 49.05 49.05 49.05 53.5576
71.49 71.49 71.49 71.49 76.1931
94.42 94.42 94.42 94.42 100.13
EOD
set logscale xy
set xrange [0.732391:115.149]
set yrange [0.732391:115.149]
set size square
set xlabel 'published iteration_s' noenhanced
set ylabel 'predicted iteration_s' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
