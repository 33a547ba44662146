# ZeRO-3 / FSDP mechanism fields of a workload's framework object (workloads/framework.hpp
# ShardingMechanism): out-of-range or mistyped values are bad input naming the JSON path.
hostile_case(zero3_negative_persistence_threshold 2 [=[framework\.sharding\.persistence_threshold.*-5]=]
  [=[cp $GOOD/tiny-zero3-deepspeed.json w.json && sed -i 's/"persistence_threshold": 100000/"persistence_threshold": -5/' w.json]=]
  [=[$PT lower --workload w.json]=])
hostile_case(zero3_synchronize_not_boolean 2 [=[framework\.sharding\.synchronize_per_gather]=]
  [=[cp $GOOD/tiny-zero3-deepspeed.json w.json && sed -i 's/"prefetch": 2,/"prefetch": 2, "synchronize_per_gather": "yes",/' w.json]=]
  [=[$PT lower --workload w.json]=])
hostile_case(zero3_prefetch_below_minus_one 2 [=[framework\.sharding\.prefetch.*-2]=]
  [=[cp $GOOD/tiny-zero3-deepspeed.json w.json && sed -i 's/"prefetch": 2/"prefetch": -2/' w.json]=]
  [=[$PT lower --workload w.json --json out.json]=])
