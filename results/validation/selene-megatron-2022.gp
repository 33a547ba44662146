set terminal svg size 760,460 dynamic font 'sans,11'
set output 'selene-megatron-2022.svg'
set title 'selene-megatron-2022: Megatron-LM 2022 (sequence parallelism, selective recomputation) on Selene, seconds per iteration' noenhanced
set key top left
set grid
$data << EOD
1.1 1.1 1.1 1.1 1.09949
1.42 1.42 1.42 1.42 1.44279
13.75 13.75 13.75 13.75 14.7767
18.13 18.13 18.13 18.13 19.7188
37.83 37.83 37.83 37.83 41.1121
49.05 49.05 49.05 49.05 54.2548
71.49 71.49 71.49 71.49 77.2542
94.42 94.42 94.42 94.42 101.641
EOD
set logscale xy
set xrange [0.732996:116.888]
set yrange [0.732996:116.888]
set size square
set xlabel 'published iteration_s' noenhanced
set ylabel 'predicted iteration_s' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
