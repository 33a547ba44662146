set terminal svg size 760,460 dynamic font 'sans,11'
set output 'perlmutter-pccl.svg'
set title 'perlmutter-pccl: PCCL collective speedups over NCCL and Cray-MPICH on Perlmutter' noenhanced
set key top left
set grid
$data << EOD
0.667 0.667 0.667 0.667 0.51514
4 4 3 5 10.5532
4 4 3 5 5.7441
4 4 3 5 16.5905
4 4 3 5 8.87552
2.5 2.5 2 3 2.44648
2.5 2.5 2 3 1.31498
2.5 2.5 2 3 0.742412
2.95 2.95 1.3 4.6 3.07834
2.95 2.95 1.3 4.6 1.67172
2.95 2.95 1.3 4.6 4.65645
11.9 11.9 8.8 15 3.66664
11.9 11.9 8.8 15 2.2708
11.9 11.9 8.8 15 5.11676
11.9 11.9 8.8 15 2.91404
0.667 0.667 0.667 0.667 0.51514
4 4 3 5 10.5532
4 4 3 5 5.7441
4 4 3 5 16.5905
4 4 3 5 8.87552
2.5 2.5 2 3 2.44648
2.5 2.5 2 3 1.31498
2.5 2.5 2 3 0.742412
2.95 2.95 1.3 4.6 3.07834
2.95 2.95 1.3 4.6 1.67172
2.95 2.95 1.3 4.6 4.65645
11.9 11.9 8.8 15 3.95695
11.9 11.9 8.8 15 2.56646
11.9 11.9 8.8 15 5.34391
11.9 11.9 8.8 15 3.14479
EOD
set logscale xy
set xrange [0.343427:19.0791]
set yrange [0.343427:19.0791]
set size square
set xlabel 'published speedup' noenhanced
set ylabel 'predicted speedup' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
