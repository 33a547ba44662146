set terminal svg size 760,460 dynamic font 'sans,11'
set output 'frontier-pccl.svg'
set title 'frontier-pccl: PCCL collective speedups over RCCL and Cray-MPICH on Frontier' noenhanced
set key top left
set grid
$data << EOD
30 30 30 30 64.4989
30 30 30 30 42.2653
30 30 30 30 25.1388
11.4 11.4 11.4 11.4 4.1419
7 7 7 7 2.33725
0.52 0.52 0.52 0.52 0.81967
30 30 30 30 64.4989
30 30 30 30 42.2653
30 30 30 30 25.1388
11.4 11.4 11.4 11.4 4.1419
6.2 6.2 6.2 6.2 2.33725
0.55 0.55 0.55 0.55 0.831556
54.5 54.5 27 82 24.6594
54.5 54.5 27 82 13.9858
54.5 54.5 27 82 7.81501
54.5 54.5 27 82 4.4821
EOD
set logscale xy
set xrange [0.346667:94.3]
set yrange [0.346667:94.3]
set size square
set xlabel 'published speedup' noenhanced
set ylabel 'predicted speedup' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
