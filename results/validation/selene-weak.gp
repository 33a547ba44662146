set terminal svg size 760,460 dynamic font 'sans,11'
set output 'selene-weak.svg'
set title 'selene-weak: Megatron-LM PTD-P weak scaling on Selene, % of theoretical peak' noenhanced
set key top left
set grid
$data << EOD
32 44 44 44 59.34
64 44 44 44 58.6043
128 46 46 46 57.5396
256 43 43 43 52.8314
512 44 44 44 50.5304
1024 45 45 45 50.5669
1536 47 47 47 52.7575
1920 50 50 50 51.1842
2520 52 52 52 57.7359
3072 52 52 52 56.9056
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
