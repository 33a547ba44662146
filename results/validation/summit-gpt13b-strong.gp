set terminal svg size 760,460 dynamic font 'sans,11'
set output 'summit-gpt13b-strong.svg'
set title 'summit-gpt13b-strong: AxoNN (dense) strong scaling of GPT-3 13B on Summit, % of peak half-precision throughput' noenhanced
set key top left
set grid
$data << EOD
256 43.3 43.3 43.3 44.2253
512 39.7 39.7 39.7 37.2474
1024 32.2 32.2 32.2 28.2986
2048 22.9 22.9 22.9 18.9295
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
