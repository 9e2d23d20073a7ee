-- written_runs: program steps that run a file an earlier call of a file-writing tool wrote
-- (grain: trajectory_id, step_idx, name), with that call's tool and arguments, for
-- `written_programs` (pipeline/analysis/resources.py), which analyses the written text.
-- Inputs: resources, shell_calls, steps, policy_tools. Parameters: none.
-- A run is an `execute` resource of a shell/code step (`python sync.py`, `bash x.sh`,
-- `./x.sh`); its writer is the latest earlier executed write of that path by a
-- file-writing tool (names compared after lg_norm_path_if, so `./x.sh` is `x.sh`; a `cd`
-- between them is not resolved beyond what `resources` already joined).
with runs as (
    select distinct r.trajectory_id, r.step_idx, lg_norm_path_if(r.resource) as name
    from resources r semi join shell_calls c on c.trajectory_id = r.trajectory_id and c.step_idx = r.step_idx
    where r.access = 'execute' and not regexp_matches(r.resource, '^[a-z][a-z0-9+.-]*:')
),
writes as (
    -- calls of file-writing tools only: a program step's write of the file (`chmod +x`,
    -- `touch`, `sed -i`, `cat >`) is not told apart from a rewrite, and is not one here
    select distinct r.trajectory_id, r.step_idx, lg_norm_path_if(r.resource) as name
    from resources r join steps s on s.trajectory_id = r.trajectory_id and s.step_idx = r.step_idx
    join policy_tools t on t.tool_key = lower(s.tool_name)
    where r.access = 'write' and s.kind = 'tool_call' and s.exec_status in ('executed', 'unknown')
        and len(t.writes) > 0 and t.shell_arg is null and t.code_arg is null
        and lg_norm_path_if(r.resource) in (select name from runs)
),
latest as (
    select u.trajectory_id, u.step_idx, u.name, max(w.step_idx) as writer_idx
    from runs u join writes w on w.trajectory_id = u.trajectory_id and w.name = u.name and w.step_idx < u.step_idx
    group by all
),
final as (
    -- the writing call's tool and arguments: written_programs takes the text it wrote
    select l.trajectory_id, l.step_idx, l.name, lower(s.tool_name) as tool_key, s.arguments
    from latest l
    join steps s on s.trajectory_id = l.trajectory_id and s.step_idx = l.writer_idx
    where s.args_ok
)
select * from final order by all
