# NCCL's tuning tables in a machine profile (profile.nccl, sim/nccl_tuning.hpp): the release families
# known (2.15, 2.22, 2.23, 2.27), and NVLS/CollNet, which no machine here has and the model does not price.
set(COLLECTIVES_EDIT [=[python3 -c 'import json, os, sys; d = json.load(open(os.environ["SRC"] + "/topology/machines/perlmutter.json")); exec(sys.argv[1]); json.dump(d, open("m.json", "w"))']=])
hostile_case(collectives_nccl_unknown_release 2 [=[m\.json.*profile\.nccl\.tuning.*2\.27]=]
  "${COLLECTIVES_EDIT} 'd[\"profile\"][\"nccl\"][\"tuning\"] = \"2.30\"'"
  [=[$PT machine show m.json]=])
hostile_case(collectives_nccl_nvls_not_modelled 2 [=[m\.json.*profile\.nccl\.nvls.*NVLS]=]
  "${COLLECTIVES_EDIT} 'd[\"profile\"][\"nccl\"][\"nvls\"] = True'"
  [=[$PT machine show m.json]=])
hostile_case(collectives_nccl_collnet_not_modelled 2 [=[m\.json.*profile\.nccl\.collnet.*CollNet]=]
  "${COLLECTIVES_EDIT} 'd[\"profile\"][\"nccl\"][\"collnet\"] = True'"
  [=[$PT machine show m.json]=])
hostile_case(collectives_nccl_nvls_false_accepted 0 [=[tuning tables of v2\.27 .*PAT for all-gather and reduce-scatter over one GPU per node]=]
  "${COLLECTIVES_EDIT} 'd[\"profile\"][\"nccl\"][\"tuning\"] = \"2.27\"; d[\"profile\"][\"nccl\"][\"nvls\"] = False'"
  [=[$PT machine show m.json]=])
