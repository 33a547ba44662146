set terminal svg size 760,460 dynamic font 'sans,11'
set output 'frontera-optimus-weak.svg'
set title 'frontera-optimus-weak: Optimus (2-D SUMMA) vs Megatron-LM weak scaling on Frontera, throughput' noenhanced
set key top left
set grid
$data << EOD
2.5229 2.5229 2.5229 2.5229 2.36789
1.4134 1.4134 1.4134 1.4134 1.0156
1.3055 1.3055 1.3055 1.3055 1.01483
0.9502 0.9502 0.9502 0.9502 1.00635
2.9363 2.9363 2.9363 2.9363 2.90029
1.3831 1.3831 1.3831 1.3831 1.24588
0.8823 0.8823 0.8823 0.8823 0.880509
0.641 0.641 0.641 0.641 0.680894
EOD
set xrange [0:3.37675]
set yrange [0:3.37675]
set size square
set xlabel 'published sequences_per_s' noenhanced
set ylabel 'predicted sequences_per_s' noenhanced
set key bottom right
plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title '±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, $data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'
