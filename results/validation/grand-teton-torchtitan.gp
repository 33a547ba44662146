set terminal svg size 760,460 dynamic font 'sans,11'
set output 'grand-teton-torchtitan.svg'
set title 'grand-teton-torchtitan: Llama 3.1 8B pre-training with TorchTitan''s FSDP2 on H100 (Grand Teton), tokens per second per GPU' noenhanced
set key top left
set grid
$data << EOD
5762 5762 5762 5762 5760.89
6667 6667 6667 6667 6938.7
5605 5605 5605 5605 5825.15
6514 6514 6514 6514 7032.15
EOD
set xrange [0:8086.97]
set yrange [0:8086.97]
set size square
set xlabel 'published tokens_per_s_per_gpu' noenhanced
set ylabel 'predicted tokens_per_s_per_gpu' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
