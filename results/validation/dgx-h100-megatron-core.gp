set terminal svg size 760,460 dynamic font 'sans,11'
set output 'dgx-h100-megatron-core.svg'
set title 'dgx-h100-megatron-core: Megatron-Core r0.8.0 weak and strong scaling on DGX H100, model TFLOP/s per GPU' noenhanced
set key top left
set grid
$data << EOD
408.8 408.8 408.8 408.8 473.299
465.9 465.9 465.9 465.9 498.873
489.1 489.1 489.1 489.1 484.44
459.6 459.6 459.6 459.6 423.601
419.7 419.7 419.7 419.7 400.754
420.5 420.5 420.5 420.5 428.667
432.8 432.8 432.8 432.8 450.029
474.4 474.4 474.4 474.4 464.376
459.9 459.9 459.9 459.9 455.462
464.8 464.8 459.9 469.8 467.797
415.4 415.4 410.4 420.3 414.069
EOD
set xrange [0:573.704]
set yrange [0:573.704]
set size square
set xlabel 'published model_tflops_per_gpu' noenhanced
set ylabel 'predicted model_tflops_per_gpu' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
