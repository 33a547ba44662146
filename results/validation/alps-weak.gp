set terminal svg size 760,460 dynamic font 'sans,11'
set output 'alps-weak.svg'
set title 'alps-weak: AxoNN 4-D weak scaling on Alps, % of advertised bf16 peak' noenhanced
set key top left
set grid
$data << EOD
1024 30.6 30.6 30.6 33.035
2048 30.7 30.7 30.7 25.1237
4096 27 27 27 16.7595
6144 23.4 23.4 23.4 16.1213
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
