set terminal svg size 760,460 dynamic font 'sans,11'
set output 'summit-axonn-phases.svg'
set title 'summit-axonn-phases: AxoNN pipelining phase of GPT-12B on 48 V100s with and without the CPU-offload memory optimisation' noenhanced
set key top left
set grid
$data << EOD
46.08 46.08 46.08 46.08 42.7134
34.05 34.05 34.05 34.05 36.1039
EOD
set xrange [0:52.992]
set yrange [0:52.992]
set size square
set xlabel 'published pipeline_phase_s' noenhanced
set ylabel 'predicted pipeline_phase_s' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
