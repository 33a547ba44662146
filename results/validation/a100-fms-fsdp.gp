set terminal svg size 760,460 dynamic font 'sans,11'
set output 'a100-fms-fsdp.svg'
set title 'a100-fms-fsdp: Llama 2 7B to 70B pre-training with PyTorch FSDP1 (IBM''s fms-fsdp) on 128 A100 80 GB GPUs, tokens/s per GPU' noenhanced
set key top left
set grid
$data << EOD
3760 3760 3760 3760 3753.83
1700 1700 1700 1700 1894.48
772 772 772 772 673.375
380 380 380 380 333.615
1800 1800 1800 1800 1740.43
700 700 700 700 638.58
370 370 370 370 319.139
EOD
set logscale xy
set xrange [212.759:4324]
set yrange [212.759:4324]
set size square
set xlabel 'published tokens_per_s_per_gpu' noenhanced
set ylabel 'predicted tokens_per_s_per_gpu' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
