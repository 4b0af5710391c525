# ctest label `exec`: the CPU executor (calib/cpu/sbp_step.py, docs/executor.md) runs one
# training step of tiny GPT and BERT models under Megatron layouts and searched per-op schemes
# on 2-8 gloo processes and checks loss, gradients and per-op boxing bytes against the single
# process step and the plan. Each case skips (exit 77) when no python3 with torch is installed.
# Clusters: autosync-b has 4 GPUs per node, so --nodes 1 gives 4 devices and --nodes 2 gives 8.
set(_exec_driver ${CMAKE_CURRENT_LIST_DIR}/scheme_test.py)
set(_gpt "layers=2,hidden=64,heads=4,seq=16,batch=8,vocab=128,dtype=fp32")
set(_gpt_b2 "layers=2,hidden=64,heads=4,seq=16,batch=2,vocab=128,dtype=fp32")
set(_gpt_flash "layers=1,hidden=32,heads=4,seq=8,batch=4,vocab=128,dtype=fp32,flash=1")
set(_bert "layers=2,hidden=32,heads=4,seq=8,batch=8,vocab=128,dtype=fp32")
set(_bert_b2 "layers=2,hidden=32,heads=4,seq=8,batch=2,vocab=128,dtype=fp32")

# autoddl_exec_test(NAME ARGS...): a case of scheme_test.py (its arguments after AUTODDL).
function(autoddl_exec_test name)
  add_test(NAME "exec: ${name}" COMMAND python3 ${_exec_driver} $<TARGET_FILE:autoddl> ${ARGN})
  set_tests_properties("exec: ${name}" PROPERTIES LABELS exec SKIP_RETURN_CODE 77 TIMEOUT 300)
endfunction()

# Megatron layouts (the lowering builds its own mesh).
autoddl_exec_test("GPT, Megatron tp=2 dp=2, 4 processes"
  --model gpt --set ${_gpt} --scheme megatron:tp=2,pp=1,dp=2)
autoddl_exec_test("GPT, Megatron tp=4 dp=2, 8 processes"
  --model gpt --set ${_gpt} --nodes 2 --scheme megatron:tp=4,pp=1,dp=2)
autoddl_exec_test("BERT, Megatron tp=4 with sequence parallelism, 4 processes"
  --model bert --set ${_bert} --scheme megatron:tp=4,pp=1,dp=1,sp=1)
autoddl_exec_test("GPT with fused causal attention, Megatron cp=2 dp=2, 4 processes"
  --model gpt --set ${_gpt_flash} --scheme megatron:tp=1,pp=1,dp=2,cp=2)
# tp=2 cp=2: the sequence split on the cp dim, heads on the tp dim (this case first ran GPT's
# context parallelism lowered as a second tensor-parallel dim, which the executor exposed).
autoddl_exec_test("GPT with fused causal attention, Megatron tp=2 cp=2, 4 processes"
  --model gpt --set ${_gpt_flash} --scheme megatron:tp=2,pp=1,dp=1,cp=2)
# Searched per-op schemes that no Megatron layout expresses (batch 2 on 4 devices: the search
# must split more than the batch).
autoddl_exec_test("GPT, searched (cd) non-Megatron scheme, 4 processes"
  --model gpt --set ${_gpt_b2} --mesh 2x2 --search cd --non-megatron)
autoddl_exec_test("GPT, searched (cd-nbh) non-Megatron scheme, 4 processes"
  --model gpt --set ${_gpt_b2} --mesh 2x2 --search cd-nbh --non-megatron)
autoddl_exec_test("BERT, searched (cd) non-Megatron scheme, 4 processes"
  --model bert --set ${_bert_b2} --mesh 2x2 --search cd --non-megatron)
# The check can fail: all-reduces that leave partial sums unsummed must be caught.
autoddl_exec_test("a broken boxing rule (--break-boxing partial) fails the check"
  --model gpt --set ${_gpt} --scheme megatron:tp=2,pp=1,dp=2 --expect-exit 1 -- --break-boxing partial)
# ... and so can the byte check: a plan that prices one collective at twice its bytes.
autoddl_exec_test("a plan with a mispriced collective fails the byte check"
  --model gpt --set ${_gpt} --scheme megatron:tp=2,pp=1,dp=2 --misprice --expect-exit 1)
# Bad input: more processes than the scheme's mesh has devices is one line and exit 2.
autoddl_exec_test("more processes than the mesh has devices exits 2"
  --model gpt --set ${_gpt} --scheme megatron:tp=2,pp=1,dp=2 --procs 8 --expect-exit 2)
