set terminal svg size 760,460 dynamic font 'sans,11'
set output 'selene-weak.svg'
set title 'selene-weak: Megatron-LM PTD-P weak scaling on Selene, % of theoretical peak' noenhanced
set key top left
set grid
$data << EOD
32 44 44 44 44.0291
64 44 44 44 44.2277
128 46 46 46 44.9697
256 43 43 43 43.3435
512 44 44 44 44.3167
1024 45 45 45 48.3226
1536 47 47 47 48.7307
1920 50 50 50 52.1561
2520 52 52 52 54.3919
3072 52 52 52 52.0251
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
