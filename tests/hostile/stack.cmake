# A workload cannot claim a feature its software stack lacks: exit 2, naming the JSON path and the
# profile, nothing written.
hostile_case(stack_feature_sequence_parallel_2021 2
  [=[parallelism\.sequence_parallel = true: framework "megatron-lm-2021" has no sequence parallelism]=]
  [=[python3 -c "import json; d=json.load(open('$EX/gpt-530b-selene-2520.json')); d['parallelism']['sequence_parallel']=True; json.dump(d, open('w.json','w'))"]=]
  [=[$PT lower -w w.json]=])
hostile_case(stack_feature_zero3_with_deepspeed_pipeline 2
  [=[parallelism\.data\.zero = 3: framework "megatron-deepspeed" runs ZeRO stages above 1 only without pipeline stages]=]
  [=[python3 -c "import json; d=json.load(open('$EX/gpt-530b-selene-2240-mtnlg.json')); d['parallelism']['data']['zero']=3; json.dump(d, open('w.json','w'))"]=]
  [=[$PT lower -w w.json]=])
hostile_case(stack_unknown_sharding_key 2 [=[framework\.sharding.*prefetch_depth]=]
  [=[python3 -c "import json; d=json.load(open('$GOOD/tiny-dp3.json')); d['parallelism']['data']['zero']=3; d['framework']={'profile':'fsdp2','sharding':{'prefetch_depth':2}}; json.dump(d, open('w.json','w'))"]=]
  [=[$PT lower -w w.json]=])
