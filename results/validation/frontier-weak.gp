set terminal svg size 760,460 dynamic font 'sans,11'
set output 'frontier-weak.svg'
set title 'frontier-weak: AxoNN 4-D weak scaling on Frontier, % of advertised bf16 peak' noenhanced
set key top left
set grid
$data << EOD
512 41.1 41.1 41.1 47.7007
1024 39.3 39.3 39.3 45.858
2048 37 37 37 43.0072
4096 37.6 37.6 37.6 37.5267
8192 36.3 36.3 36.3 32.5622
16384 32.4 32.4 32.4 23.4365
32768 22 22 22 20.6082
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
