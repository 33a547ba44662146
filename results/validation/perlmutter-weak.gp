set terminal svg size 760,460 dynamic font 'sans,11'
set output 'perlmutter-weak.svg'
set title 'perlmutter-weak: AxoNN 4-D weak scaling on Perlmutter, % of advertised bf16 peak' noenhanced
set key top left
set grid
$data << EOD
512 50.6 50.6 50.6 61.0284
1024 61.9 61.9 61.9 54.8026
2048 55.2 55.2 55.2 46.6465
4096 48.5 48.5 48.5 39.3663
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
