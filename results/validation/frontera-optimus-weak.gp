set terminal svg size 760,460 dynamic font 'sans,11'
set output 'frontera-optimus-weak.svg'
set title 'frontera-optimus-weak: Optimus (2-D SUMMA) vs Megatron-LM weak scaling on Frontera, throughput' noenhanced
set key top left
set grid
$data << EOD
2.5229 2.5229 2.5229 2.5229 3.21969
1.4134 1.4134 1.4134 1.4134 2.86845
1.3055 1.3055 1.3055 1.3055 1.80314
0.9502 0.9502 0.9502 0.9502 2.28348
2.9363 2.9363 2.9363 2.9363 3.83525
1.3831 1.3831 1.3831 1.3831 1.91959
0.8823 0.8823 0.8823 0.8823 1.38627
0.641 0.641 0.641 0.641 1.07846
EOD
set xrange [0:4.41054]
set yrange [0:4.41054]
set size square
set xlabel 'published sequences_per_s' noenhanced
set ylabel 'predicted sequences_per_s' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
