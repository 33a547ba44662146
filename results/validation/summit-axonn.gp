set terminal svg size 760,460 dynamic font 'sans,11'
set output 'summit-axonn.svg'
set title 'summit-axonn: AxoNN (pipeline + data) weak scaling on Summit, % of peak half-precision throughput' noenhanced
set key top left
set grid
$data << EOD
48 51.5 49 54 56.0005
96 51.5 49 54 54.9751
192 51.5 49 54 52.8337
384 51.5 49 54 49.976
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'percent_of_peak' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
