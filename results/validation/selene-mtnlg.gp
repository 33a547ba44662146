set terminal svg size 760,460 dynamic font 'sans,11'
set output 'selene-mtnlg.svg'
set title 'selene-mtnlg: MT-NLG 530B on 2,240 to 3,360 A100 GPUs of Selene with Megatron-DeepSpeed, seconds per iteration' noenhanced
set key top left
set grid
$data << EOD
2240 60.1 60.1 60.1 60.8917
2800 50.2 50.2 50.2 50.2283
3360 44.4 44.4 44.4 43.1194
EOD
set xlabel 'GPUs'
set logscale x 2
set ylabel 'iteration_s' noenhanced
plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', $data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'
