set terminal svg size 760,460 dynamic font 'sans,11'
set output 'frontier-pccl.svg'
set title 'frontier-pccl: PCCL collective speedups over RCCL and Cray-MPICH on Frontier' noenhanced
set key top left
set grid
$data << EOD
30 30 30 30 83.0831
30 30 30 30 59.6289
30 30 30 30 38.1934
11.4 11.4 11.4 11.4 6.64363
7 7 7 7 3.6036
0.52 0.52 0.52 0.52 0.644796
30 30 30 30 83.0831
30 30 30 30 59.6289
30 30 30 30 38.1934
11.4 11.4 11.4 11.4 6.64363
6.2 6.2 6.2 6.2 3.6036
0.55 0.55 0.55 0.55 0.64476
54.5 54.5 27 82 37.7625
54.5 54.5 27 82 22.6068
54.5 54.5 27 82 13.0514
54.5 54.5 27 82 7.62184
EOD
set logscale xy
set xrange [0.346667:95.5455]
set yrange [0.346667:95.5455]
set size square
set xlabel 'published speedup' noenhanced
set ylabel 'predicted speedup' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
