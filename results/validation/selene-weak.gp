set terminal svg size 760,460 dynamic font 'sans,11'
set output 'selene-weak.svg'
set title 'selene-weak: Megatron-LM PTD-P weak scaling on Selene, % of theoretical peak' noenhanced
set key top left
set grid
$data << EOD
32 44 44 44 44.029
64 44 44 44 44.245
128 46 46 46 45.0204
256 43 43 43 43.2439
512 44 44 44 44.1532
1024 45 45 45 48.1329
1536 47 47 47 48.4839
1920 50 50 50 51.8637
2520 52 52 52 54.0575
3072 52 52 52 51.6832
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
