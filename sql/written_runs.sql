-- written_runs: program steps that run a file, the calls of file-writing tools that wrote
-- that file before its last run, and the copies of other files into it (grain:
-- trajectory_id, step_idx, name, and a copy's original), in step order, for
-- `written_programs` (pipeline/analysis/written.py), which follows each file's text from
-- write to write and analyses what is known of it at each run.
-- Inputs: resources, shell_calls, shell_texts, shell_runners, shell_run_folders, shell_copies, steps,
--         policy_tools, written_scope (trajectory_id: the trajectories of a further pass).
-- Parameters: $scoped (only the runs of written_scope's trajectories: a further pass of
--             written_programs, which follows files that written programs run in turn).
-- A run is an `execute` resource of a shell/code step (`python sync.py`, `bash x.sh`,
-- `./x.sh`); a write is an executed (or unknown) write of that path by a file-writing
-- tool (names compared after lg_norm_path_if, so `./x.sh` is `x.sh`; a `cd` between them
-- is not resolved beyond what `resources` already joined). A copy a shell step makes of
-- another file (`cp x.sh y`, `mv notes.txt run.sh`, `cat x > y`: shell_copies) is followed
-- from its original, which is followed up to the copy.
with recursive scoped as (
    -- the resources of the trajectories followed (a further pass reads only its own)
    select * from resources where not $scoped or trajectory_id in (select trajectory_id from written_scope)
),
scoped_steps as (
    select * from steps where not $scoped or trajectory_id in (select trajectory_id from written_scope)
),
named_runs as (
    select distinct r.trajectory_id, r.step_idx, lg_norm_path_if(r.resource) as name
    from scoped r semi join shell_calls c on c.trajectory_id = r.trajectory_id and c.step_idx = r.step_idx
    where r.access = 'execute' and not regexp_matches(r.resource, '^[a-z][a-z0-9+.-]*:')
),
test_folders as (
    -- a pytest run names the conftest.py of each folder it collects from (runner 'pytest'):
    -- it also runs the test files it finds under that folder ('' where it starts)
    select distinct trajectory_id, step_idx, regexp_replace(name, '/?conftest\.py$', '') as folder
    from shell_runners where runner = 'pytest'
      and (not $scoped or trajectory_id in (select trajectory_id from written_scope)) and regexp_matches(name, '(^|/)conftest\.py$')
),
written_tests as (
    -- the files written earlier that pytest collects by their name (test_*.py, *_test.py)
    -- and the conftest.py files it loads in the folders it collects from
    select distinct trajectory_id, step_idx, lg_norm_path_if(resource) as name
    from scoped
    where access = 'write'
      and regexp_full_match(regexp_extract(resource, '[^/]*$'), 'test_[^/]*\.py|[^/]*_test\.py|conftest\.py')
),
deletes as (
    select trajectory_id, step_idx, lg_norm_path_if(resource) as name from scoped where access = 'delete'
),
discovered as (
    -- not above where it starts (`../x/test_a.py`), nor a file deleted since its write
    -- (`rm tests/test_a.py`, `rm -rf tests`)
    select distinct f.trajectory_id, f.step_idx, w.name
    from test_folders f
    join written_tests w on w.trajectory_id = f.trajectory_id and w.step_idx <= f.step_idx
    where ((f.folder = '' and not starts_with(w.name, '/') and not starts_with(w.name, '~')
            and not starts_with(w.name, '../'))
           or starts_with(w.name, f.folder || '/'))
      and not exists (select 1 from deletes d
                      where d.trajectory_id = w.trajectory_id and d.step_idx > w.step_idx and d.step_idx < f.step_idx
                        and (d.name = w.name or starts_with(w.name, d.name || '/')))
),
runs as (
    select * from named_runs
    union
    select * from discovered
),
run_runners as (
    -- how the step runs the file (shell_runners, from the shell analyser): `bash x.py` names
    -- shell, `python3 x` python, `node x` other, `./x` '' (its `#!` line decides), a
    -- pytest run a conftest.py 'pytest' (python) and the test files it finds 'python'; a
    -- name with no row (a folder carried from an earlier step) runs as itself (null)
    select trajectory_id, step_idx, name, list(distinct runner order by runner) as runners
    from (select trajectory_id, step_idx, name, runner from shell_runners
          union all
          select trajectory_id, step_idx, name, 'python' from discovered)
    group by all
),
run_folders as (
    -- the folder the step runs the file in, when not where the trajectory's shell started
    -- (shell_run_folders: a `cd` before the run, a carried folder): the file's relative
    -- names are also read under it
    select trajectory_id, step_idx, name, list(distinct folder order by folder) as folders
    from shell_run_folders group by all
),
last_runs as (
    -- a write after a file's last run changes nothing that ran
    select trajectory_id, name, max(step_idx) as last_run from runs group by all
),
copies as (
    -- the copies of steps that ran (or may have: `unknown`), as for their texts below
    select distinct c.trajectory_id, c.step_idx, c.copy, c.original, c.k
    from shell_copies c join scoped_steps s on s.trajectory_id = c.trajectory_id and s.step_idx = c.step_idx
    where s.kind = 'tool_call' and s.exec_status in ('executed', 'unknown')
),
followed as (
    -- the files followed, each up to a step: those run, up to their last run, and the
    -- originals of copies into a followed file up to the copy (in the same step too: `cp
    -- x.sh y && bash y`), transitively (a copy of a copy); one row per copy at most
    select trajectory_id, name, last_run as upto from last_runs
    union
    select c.trajectory_id, c.original, c.step_idx
    from followed f join copies c on c.trajectory_id = f.trajectory_id and c.copy = f.name and c.step_idx <= f.upto
),
bounds as (
    select trajectory_id, name, max(upto) as upto from followed group by all
),
writes as (
    -- calls of file-writing tools only: a program step's write of the file (`chmod +x`,
    -- `touch`, `sed -i`, `cat >`) is not told apart from a rewrite, and is not one here
    select distinct r.trajectory_id, r.step_idx, l.name
    from scoped r join scoped_steps s on s.trajectory_id = r.trajectory_id and s.step_idx = r.step_idx
    join policy_tools t on t.tool_key = lower(s.tool_name)
    join bounds l on l.trajectory_id = r.trajectory_id and l.name = lg_norm_path_if(r.resource)
    where r.access = 'write' and s.kind = 'tool_call' and s.exec_status in ('executed', 'unknown')
        and len(t.writes) > 0 and t.shell_arg is null and t.code_arg is null
        and r.step_idx < l.upto
),
shell_writes as (
    -- a shell step's write of a known text (`cat > x.py <<'EOF' ...`, `echo ... >> x.sh`:
    -- shell_texts, from the shell analyser), up to and including the step of the last run
    -- (`cat > x.py <<'EOF' ... EOF; python x.py`: the write comes first in its step) or of
    -- the copy
    select w.trajectory_id, w.step_idx, w.name, w.program_id, w.k
    from shell_texts w
    join bounds l on l.trajectory_id = w.trajectory_id and l.name = w.name
    join scoped_steps s on s.trajectory_id = w.trajectory_id and s.step_idx = w.step_idx
    where s.kind = 'tool_call' and s.exec_status in ('executed', 'unknown') and w.step_idx <= l.upto
),
shell_rewrites as (
    -- any write of the file by a shell or code step (`cp b x.py`, `sed -i`, `git checkout --
    -- x.py`, and those of known text): what the file holds after it is not known exactly
    -- (written_programs then follows it as a lower bound)
    select distinct r.trajectory_id, r.step_idx, l.name
    from scoped r semi join shell_calls c on c.trajectory_id = r.trajectory_id and c.step_idx = r.step_idx
    join bounds l on l.trajectory_id = r.trajectory_id and l.name = lg_norm_path_if(r.resource)
    where r.access = 'write' and r.step_idx <= l.upto
),
write_rows as (
    -- the first of a call's rows carries its arguments (a patch writes thousands of files:
    -- one copy of its arguments, not one per file)
    select trajectory_id, step_idx, name,
        row_number() over (partition by trajectory_id, step_idx order by name) = 1 as first_row
    from writes
),
final as (
    -- written_programs reads each call's text once, from its first row (`executed`: the call
    -- is known to have run, not only maybe: only then does an exact edit of it apply); a
    -- shell write names its text by (program_id, k): the k-th known text of that program's
    -- analysis; a shell rewrite has neither tool nor text; a copy names its `original`.
    -- `phase` orders a step's events: the files' writes (1), the copies (2), the runs (3)
    select trajectory_id, step_idx, name, false as is_write, null::varchar as tool_key, null::varchar as arguments,
        null::bigint as program_id, null::bigint as k, null::boolean as executed, u.runners,
        null::varchar as original, f.folders, 3 as phase
    from runs left join run_runners u using (trajectory_id, step_idx, name)
    left join run_folders f using (trajectory_id, step_idx, name)
    union all
    select w.trajectory_id, w.step_idx, w.name, true, lower(s.tool_name), s.arguments, null, null,
        s.exec_status = 'executed', null, null, null, 1
    from write_rows w join scoped_steps s on s.trajectory_id = w.trajectory_id and s.step_idx = w.step_idx
    where w.first_row and s.args_ok
    union all
    select w.trajectory_id, w.step_idx, w.name, true, lower(s.tool_name), null, null, null,
        s.exec_status = 'executed', null, null, null, 1
    from write_rows w join scoped_steps s on s.trajectory_id = w.trajectory_id and s.step_idx = w.step_idx
    where not w.first_row and s.args_ok
    union all
    select trajectory_id, step_idx, name, true, null, null, program_id, k, null, null, null, null, 1
    from shell_writes
    union all
    select trajectory_id, step_idx, name, true, null, null, null, null, null, null, null, null, 1
    from shell_rewrites
    union all
    -- the copies into followed files (in a step, in the order the step makes them: `k`)
    select c.trajectory_id, c.step_idx, c.copy, true, null, null, null, c.k, null, null, c.original, null, 2
    from copies c join bounds b on b.trajectory_id = c.trajectory_id and b.name = c.copy and c.step_idx <= b.upto
)
-- in step order; in one step, the files' writes (a file's texts in the order written, then
-- its other writes), then the copies, then the runs
select * exclude (phase) from final order by trajectory_id, step_idx, phase, k nulls last, name, original
