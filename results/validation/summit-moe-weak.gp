set terminal svg size 760,460 dynamic font 'sans,11'
set output 'summit-moe-weak.svg'
set title 'summit-moe-weak: TED MoE (16 experts) weak scaling on Summit with DTD + CAC, % of peak half-precision throughput' noenhanced
set key top left
set grid
$data << EOD
32 36.7 36.7 36.7 33.2504
64 30 30 30 28.3697
128 26.2 26.2 26.2 23.918
256 11.7 11.7 11.7 12.4646
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
