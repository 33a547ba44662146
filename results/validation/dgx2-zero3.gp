set terminal svg size 760,460 dynamic font 'sans,11'
set output 'dgx2-zero3.svg'
set title 'dgx2-zero3: DeepSpeed ZeRO-3 (the baseline of ZeRO++) on 384 V100 GPUs of 24 DGX-2 nodes, 100 to 800 Gb/s per node, TFLOP/s per GPU' noenhanced
set key top left
set grid
$data << EOD
14 14 14 14 14.9774
26 26 26 26 26.7823
37 37 37 37 39.1916
25 25 25 25 36.7394
40 40 40 40 44.6689
47 47 47 47 46.2024
EOD
set xrange [0:54.05]
set yrange [0:54.05]
set size square
set xlabel 'published tflops_per_gpu' noenhanced
set ylabel 'predicted tflops_per_gpu' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
