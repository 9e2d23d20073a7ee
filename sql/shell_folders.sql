-- shell_folders: the folder a shell step runs in, when that is not where the trajectory's
-- shell started: a `cd` in an earlier step of the same session (a tool whose catalog entry
-- says shell_session = "persistent": one shell per trajectory and tool, its working folder
-- kept between calls), or the call's own working-folder argument (catalog `workdir`, e.g.
-- Codex's `workdir`). pipeline/analysis/resources.py records the relative paths the step
-- names where it started also under this folder, as the analyser does after a `cd` within
-- one command (README, "The shell session").
-- Grain: (trajectory_id, step_idx); only steps with such a folder ('.': where the shell
-- started; a relative folder is relative to it, `sub` after `cd sub`).
-- Inputs: shell_calls (trajectory_id, step_idx, program_id: the shell and code calls),
-- program_folders (program_id, folder: where a shell program leaves its shell, relative to
-- where it started; null when unknown; no row when it stays), steps (exec_status,
-- arguments), policy_tools (shell_session, workdir_arg). Parameters: none.
-- A step moves its session's folder only when it ran (exec_status executed or unknown: a
-- failed or blocked `cd` moves nothing); a move to an unknown folder (`cd $(mktemp -d)`,
-- `cd -`, an opaque command, a `cd` in a subshell or conditional) ends what is carried
-- until the next `cd` to an absolute or home folder.
with calls as (
    select c.trajectory_id, c.step_idx, c.program_id, t.tool_key, t.shell_session = 'persistent' as persistent,
        s.exec_status in ('executed', 'unknown') as ran,
        -- a case: arguments that are not JSON never reach shell_calls, but the path is built per row
        case when t.workdir_arg is not null
            then lg_norm_path_if(nullif(trim(s.arguments ->> ('$."' || t.workdir_arg || '"')), '')) end as workdir
    from shell_calls c
    join steps s using (trajectory_id, step_idx)
    join policy_tools t on t.tool_key = lower(s.tool_name)
    where t.shell_session = 'persistent' or t.workdir_arg is not null
),
moves as (
    -- what a step of a persistent session does to its folder: `reset` to an absolute, home
    -- or unknown (null) folder (a working-folder argument resets to it first), or a
    -- relative `step` from where it was
    select c.*, f.program_id is not null as cds, f.folder,
        c.persistent and c.ran and (c.workdir is not null or f.program_id is not null) as moved,
        c.workdir is not null or f.folder is null or f.folder like '/%' or f.folder like '~%' as reset,
        case when f.program_id is null then c.workdir
             when f.folder is null or f.folder like '/%' or f.folder like '~%' or c.workdir is null then f.folder
             else c.workdir || '/' || f.folder end as piece
    from calls c left join program_folders f using (program_id)
),
segments as (
    -- each reset starts a segment; the moves after it in step order are relative to it
    select *, sum(case when reset then 1 else 0 end) over (partition by trajectory_id, tool_key order by step_idx
                                                          rows between unbounded preceding and current row) as seg
    from moves where moved
),
ends as (
    -- where each move leaves the session: its segment's reset (unknown: null) and the relative
    -- moves since, joined and normalised
    select trajectory_id, step_idx, tool_key,
        case when bool_or(reset and piece is null) over whole then null
             -- pieces are normalised already: only a relative one can bring a `..`
             else lg_norm_path_if(string_agg(piece, '/') over upto) end as folder
    from segments
    window whole as (partition by trajectory_id, tool_key, seg),
           upto as (partition by trajectory_id, tool_key, seg order by step_idx
                    rows between unbounded preceding and current row)
),
carried as (
    -- the folder a step starts in: where the session's last earlier move left it ('.' before any)
    select c.trajectory_id, c.step_idx, c.program_id, c.persistent, c.workdir,
        last_value(case when e.step_idx is not null then {'folder': e.folder} end ignore nulls) over (
            partition by c.trajectory_id, c.tool_key order by c.step_idx
            rows between unbounded preceding and 1 preceding) as before
    from calls c left join ends e using (trajectory_id, step_idx)
),
final as (
    select trajectory_id, step_idx, program_id,
        coalesce(workdir, case when persistent then case when before is null then '.' else before.folder end end) as folder
    from carried
)
select * from final where folder is not null and folder <> '.'
