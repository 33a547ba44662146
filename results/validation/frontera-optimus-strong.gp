set terminal svg size 760,460 dynamic font 'sans,11'
set output 'frontera-optimus-strong.svg'
set title 'frontera-optimus-strong: Optimus (2-D SUMMA) vs Megatron-LM strong scaling on Frontera, throughput' noenhanced
set key top left
set grid
$data << EOD
1.3195 1.3195 1.3195 1.3195 1.14996
1.4095 1.4095 1.4095 1.4095 1.08337
1.5653 1.5653 1.5653 1.5653 1.51643
2.0123 2.0123 2.0123 2.0123 1.84714
1.6737 1.6737 1.6737 1.6737 1.51429
1.8397 1.8397 1.8397 1.8397 1.72739
1.747 1.747 1.747 1.747 1.807
1.818 1.818 1.818 1.818 1.86541
EOD
set xrange [0:2.31414]
set yrange [0:2.31414]
set size square
set xlabel 'published sequences_per_s' noenhanced
set ylabel 'predicted sequences_per_s' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
