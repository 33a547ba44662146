set terminal svg size 760,460 dynamic font 'sans,11'
set output 'selene-weak.svg'
set title 'selene-weak: Megatron-LM PTD-P weak scaling on Selene, % of theoretical peak' noenhanced
set key top left
set grid
$data << EOD
32 44 44 44 67.4995
64 44 44 44 64.5559
128 46 46 46 60.5218
256 43 43 43 56.1685
512 44 44 44 56.0633
1024 45 45 45 59.9899
1536 47 47 47 61.7149
1920 50 50 50 65.08
2520 52 52 52 68.1771
3072 52 52 52 65.6032
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
