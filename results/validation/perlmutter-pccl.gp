set terminal svg size 760,460 dynamic font 'sans,11'
set output 'perlmutter-pccl.svg'
set title 'perlmutter-pccl: PCCL collective speedups over NCCL and Cray-MPICH on Perlmutter' noenhanced
set key top left
set grid
$data << EOD
0.667 0.667 0.667 0.667 0.570036
4 4 3 5 28.756
4 4 3 5 17.1903
4 4 3 5 55.7196
4 4 3 5 33.4758
2.5 2.5 2 3 10.1785
2.5 2.5 2 3 5.50347
2.5 2.5 2 3 3.06224
2.95 2.95 1.3 4.6 9.69136
2.95 2.95 1.3 4.6 5.35659
2.95 2.95 1.3 4.6 18.7768
11.9 11.9 8.8 15 11.4694
11.9 11.9 8.8 15 7.03586
11.9 11.9 8.8 15 20.9056
11.9 11.9 8.8 15 12.0459
0.667 0.667 0.667 0.667 0.570036
4 4 3 5 28.756
4 4 3 5 17.1903
4 4 3 5 55.7196
4 4 3 5 33.4758
2.5 2.5 2 3 10.1785
2.5 2.5 2 3 5.50347
2.5 2.5 2 3 3.06224
2.95 2.95 1.3 4.6 9.69136
2.95 2.95 1.3 4.6 5.35659
2.95 2.95 1.3 4.6 18.7768
11.9 11.9 8.8 15 12.1675
11.9 11.9 8.8 15 7.77032
11.9 11.9 8.8 15 21.5995
11.9 11.9 8.8 15 12.7792
EOD
set logscale xy
set xrange [0.380024:64.0776]
set yrange [0.380024:64.0776]
set size square
set xlabel 'published speedup' noenhanced
set ylabel 'predicted speedup' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
