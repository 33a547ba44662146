set terminal svg size 760,460 dynamic font 'sans,11'
set output 'selene-weak.svg'
set title 'selene-weak: Megatron-LM PTD-P weak scaling on Selene, % of theoretical peak' noenhanced
set key top left
set grid
$data << EOD
32 44 44 44 44.262
64 44 44 44 43.6538
128 46 46 46 42.8011
256 43 43 43 40.7411
512 44 44 44 39.8708
1024 45 45 45 42.2006
1536 47 47 47 42.9697
1920 50 50 50 44.7955
2520 52 52 52 46.6591
3072 52 52 52 44.7178
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
