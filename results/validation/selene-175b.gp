set terminal svg size 760,460 dynamic font 'sans,11'
set output 'selene-175b.svg'
set title 'selene-175b: GPT-3 175B on 1,024 A100 GPUs of Selene, TFLOP/s per GPU' noenhanced
set key top left
set grid
$data << EOD
140 140 140 140 149.607
EOD
set xrange [0:172.048]
set yrange [0:172.048]
set size square
set xlabel 'published tflops_per_gpu' noenhanced
set ylabel 'predicted tflops_per_gpu' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
