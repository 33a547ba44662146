set terminal svg size 760,460 dynamic font 'sans,11'
set output 'perlmutter-pccl.svg'
set title 'perlmutter-pccl: PCCL collective speedups over NCCL and Cray-MPICH on Perlmutter' noenhanced
set key top left
set grid
$data << EOD
0.667 0.667 0.667 0.667 0.509314
4 4 3 5 3.40653
4 4 3 5 2.63438
4 4 3 5 4.28973
4 4 3 5 2.92363
2.5 2.5 2 3 1.73086
2.5 2.5 2 3 1.13335
2.5 2.5 2 3 0.692355
2.95 2.95 1.3 4.6 2.18612
2.95 2.95 1.3 4.6 1.45367
2.95 2.95 1.3 4.6 2.14667
11.9 11.9 8.8 15 5.43642
11.9 11.9 8.8 15 3.39708
11.9 11.9 8.8 15 7.50523
11.9 11.9 8.8 15 4.30619
0.667 0.667 0.667 0.667 0.509314
4 4 3 5 3.40653
4 4 3 5 2.63438
4 4 3 5 4.28973
4 4 3 5 2.92363
2.5 2.5 2 3 1.73086
2.5 2.5 2 3 1.13335
2.5 2.5 2 3 0.692355
2.95 2.95 1.3 4.6 2.18612
2.95 2.95 1.3 4.6 1.45367
2.95 2.95 1.3 4.6 2.14667
11.9 11.9 8.8 15 5.86685
11.9 11.9 8.8 15 3.83939
11.9 11.9 8.8 15 7.83841
11.9 11.9 8.8 15 4.64719
EOD
set logscale xy
set xrange [0.339542:17.25]
set yrange [0.339542:17.25]
set size square
set xlabel 'published speedup' noenhanced
set ylabel 'predicted speedup' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
