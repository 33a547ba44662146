set terminal svg size 760,460 dynamic font 'sans,11'
set output 'h100-fms-fsdp.svg'
set title 'h100-fms-fsdp: Llama 2 7B to 70B pre-training with PyTorch FSDP1 (IBM''s fms-fsdp) on 96 H100 80 GB GPUs, tokens/s per GPU' noenhanced
set key top left
set grid
$data << EOD
7500 7500 7500 7500 9141.86
3800 3800 3800 3800 4346.57
1550 1550 1550 1550 1658.45
800 800 800 800 843.437
EOD
set logscale xy
set xrange [533.333:10513.1]
set yrange [533.333:10513.1]
set size square
set xlabel 'published tokens_per_s_per_gpu' noenhanced
set ylabel 'predicted tokens_per_s_per_gpu' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
