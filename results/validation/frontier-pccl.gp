set terminal svg size 760,460 dynamic font 'sans,11'
set output 'frontier-pccl.svg'
set title 'frontier-pccl: PCCL collective speedups over RCCL and Cray-MPICH on Frontier' noenhanced
set key top left
set grid
$data << EOD
30 30 30 30 72.6932
30 30 30 30 49.5576
30 30 30 30 30.422
11.4 11.4 11.4 11.4 5.21763
7 7 7 7 2.95468
0.52 0.52 0.52 0.52 0.81967
30 30 30 30 72.6932
30 30 30 30 49.5576
30 30 30 30 30.422
11.4 11.4 11.4 11.4 5.21763
6.2 6.2 6.2 6.2 2.95468
0.55 0.55 0.55 0.55 0.831556
54.5 54.5 27 82 29.8418
54.5 54.5 27 82 17.2847
54.5 54.5 27 82 9.77856
54.5 54.5 27 82 5.64618
EOD
set logscale xy
set xrange [0.346667:94.3]
set yrange [0.346667:94.3]
set size square
set xlabel 'published speedup' noenhanced
set ylabel 'predicted speedup' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
