set terminal svg size 760,460 dynamic font 'sans,11'
set output 'frontier-pccl.svg'
set title 'frontier-pccl: PCCL collective speedups over RCCL and Cray-MPICH on Frontier' noenhanced
set key top left
set grid
$data << EOD
30 30 30 30 83.36
30 30 30 30 60.4512
30 30 30 30 39.1695
11.4 11.4 11.4 11.4 7.23017
7 7 7 7 4.11306
0.52 0.52 0.52 0.52 0.81967
30 30 30 30 83.36
30 30 30 30 60.4512
30 30 30 30 39.1695
11.4 11.4 11.4 11.4 7.23017
6.2 6.2 6.2 6.2 4.11306
0.55 0.55 0.55 0.55 0.898504
54.5 54.5 27 82 40.6843
54.5 54.5 27 82 24.436
54.5 54.5 27 82 14.0935
54.5 54.5 27 82 8.18257
EOD
set logscale xy
set xrange [0.346667:95.864]
set yrange [0.346667:95.864]
set size square
set xlabel 'published speedup' noenhanced
set ylabel 'predicted speedup' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
