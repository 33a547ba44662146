set terminal svg size 760,460 dynamic font 'sans,11'
set output 'selene-weak.svg'
set title 'selene-weak: Megatron-LM PTD-P weak scaling on Selene, % of theoretical peak' noenhanced
set key top left
set grid
$data << EOD
32 44 44 44 44.0601
64 44 44 44 44.5791
128 46 46 46 46.0851
256 43 43 43 44.1255
512 44 44 44 43.6051
1024 45 45 45 47.4902
1536 47 47 47 48.0298
1920 50 50 50 51.3349
2520 52 52 52 53.6403
3072 52 52 52 51.4167
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
