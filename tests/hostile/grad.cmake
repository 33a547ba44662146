# Gradient reduction mechanisms: inputs that would make paratwin build more than it can.

# A gradient bucket of one byte cuts GPT 1.7B's gradients into billions of collectives: refused before
# lowering allocates them, naming the key (the bucket size was once ignored).
hostile_case(grad_bucket_bytes_too_small 2
  [=[framework\.gradient_bucket_bytes = 1 bytes makes about [0-9]+ gradient-bucket collectives per iteration.*use larger buckets]=]
  [=[sed 's/"framework": {"profile": "megatron-lm-2021"}/"framework": {"profile": "megatron-lm-2021", "gradient_bucket_bytes": 1}/' $EX/gpt-1.7b-selene-32.json > w.json && grep -q gradient_bucket_bytes w.json]=]
  [=[$PT lower -w w.json]=])
