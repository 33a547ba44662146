set terminal svg size 760,460 dynamic font 'sans,11'
set output 'dgx-h100-llama.svg'
set title 'dgx-h100-llama: Llama 3 70B and Llama 3.1 405B pre-training with fp8 on DGX H100 (Megatron-Bridge), model TFLOP/s per GPU' noenhanced
set key top left
set grid
$data << EOD
719 719 719 719 681.028
734 734 734 734 699.782
737 737 737 737 763.099
EOD
set xrange [0:877.564]
set yrange [0:877.564]
set size square
set xlabel 'published model_tflops_per_gpu' noenhanced
set ylabel 'predicted model_tflops_per_gpu' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
