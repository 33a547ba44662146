set terminal svg size 760,460 dynamic font 'sans,11'
set output 'perlmutter-pccl.svg'
set title 'perlmutter-pccl: PCCL collective speedups over NCCL and Cray-MPICH on Perlmutter' noenhanced
set key top left
set grid
$data << EOD
0.667 0.667 0.667 0.667 0.570036
4 4 3 5 10.9195
4 4 3 5 5.95796
4 4 3 5 17.0438
4 4 3 5 9.13314
2.5 2.5 2 3 2.52097
2.5 2.5 2 3 1.35535
2.5 2.5 2 3 0.7653
2.95 2.95 1.3 4.6 3.19726
2.95 2.95 1.3 4.6 1.73755
2.95 2.95 1.3 4.6 4.79596
11.9 11.9 8.8 15 3.80829
11.9 11.9 8.8 15 2.36021
11.9 11.9 8.8 15 5.27006
11.9 11.9 8.8 15 3.00277
0.667 0.667 0.667 0.667 0.570036
4 4 3 5 10.9195
4 4 3 5 5.95796
4 4 3 5 17.0438
4 4 3 5 9.13314
2.5 2.5 2 3 2.52097
2.5 2.5 2 3 1.35535
2.5 2.5 2 3 0.7653
2.95 2.95 1.3 4.6 3.19726
2.95 2.95 1.3 4.6 1.73755
2.95 2.95 1.3 4.6 4.79596
11.9 11.9 8.8 15 4.10982
11.9 11.9 8.8 15 2.66751
11.9 11.9 8.8 15 5.50402
11.9 11.9 8.8 15 3.24055
EOD
set logscale xy
set xrange [0.380024:19.6004]
set yrange [0.380024:19.6004]
set size square
set xlabel 'published speedup' noenhanced
set ylabel 'predicted speedup' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
