set terminal svg size 760,460 dynamic font 'sans,11'
set output 'frontier-pccl.svg'
set title 'frontier-pccl: PCCL collective speedups over RCCL and Cray-MPICH on Frontier' noenhanced
set key top left
set grid
$data << EOD
30 30 30 30 84.3283
30 30 30 30 61.8502
30 30 30 30 40.9686
11.4 11.4 11.4 11.4 9.6297
7 7 7 7 6.57119
0.52 0.52 0.52 0.52 0.81967
30 30 30 30 84.3283
30 30 30 30 61.8502
30 30 30 30 40.9686
11.4 11.4 11.4 11.4 9.6297
6.2 6.2 6.2 6.2 6.57119
0.55 0.55 0.55 0.55 0.898504
54.5 54.5 27 82 40.6843
54.5 54.5 27 82 24.436
54.5 54.5 27 82 14.0935
54.5 54.5 27 82 8.18257
EOD
set logscale xy
set xrange [0.346667:96.9775]
set yrange [0.346667:96.9775]
set size square
set xlabel 'published speedup' noenhanced
set ylabel 'predicted speedup' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
