-- classifier_calls: every tool call with the text the built-in classifier's rules read
-- (grain: trajectory_id, step_idx). Inputs: events, policy_tools. A shell call whose
-- command only mentions what a rule looks for gets `masked` and its `command_text` with the
-- data parts blanked afterwards, on the candidates only (pipeline/analysis/inert_texts.py).
-- Parameters: $pattern (the alternation of every `argument = "*"` rule's pattern),
-- $runs_later (classifier.runs_later: written paths that run by themselves later).
-- An argument that is a list of strings (an argv) is read as its words joined by spaces, and
-- so is a list of string literals in a shell or code step's text (sql/macros.sql lg_code_argvs).
-- Running is not writing: for a tool that writes files (catalog `writes`, not a shell or
-- code step) the `*` rules read only its resource arguments (`command_text`); a match only
-- inside the content it writes is `written` (sql/classifier_hits.sql). `candidate`: some
-- `*` rule can match at all, found by one RE2 pass, so the per-rule passes skip the rest.
with calls as (
    select e.trajectory_id, e.step_idx, e.arguments, e.args_ok, lower(e.tool_name) as tool_key,
        lower(t.catalog_name) as catalog_key,
        coalesce(len(t.writes) > 0 and t.shell_arg is null and t.code_arg is null, false) as writes_files,
        list_concat(t.reads, t.writes, t.executes, t.deletes, t.sends, t.control) as resource_args,
        t.writes as write_args,
        -- a shell or code step: its line breaks separate commands (lg_line_breaks below); in
        -- other tools' text (a mail body, a description) a line is prose, read as before
        coalesce(t.shell_arg is not null or t.code_arg is not null, false) as program
    from events e left join policy_tools t on t.tool_key = lower(e.tool_name)
    where e.kind = 'tool_call'
),
writers as (
    select *,
        -- a file that runs by itself later (start-up file, cron, hook): its content is run.
        -- A case, not `args_ok and ...`: SQL's and evaluates both sides, and arguments
        -- that are not JSON (args_ok false) fail the JSON path
        writes_files and not coalesce(case when args_ok then len(list_filter(write_args, lambda k:
            regexp_matches(coalesce(arguments ->> ('$."' || k || '"'), ''), $runs_later))) > 0 end, false) as writer
    from calls
),
argv_texts as (
    -- an argument given as an argv (["rm", "-rf", "/"]) is also read as its command line
    -- (sql/macros.sql lg_with_argvs): the rules are written for command strings. A column of
    -- its own: the macros below name their argument several times, and a macro's argument
    -- is an expression copied into each place (lg_with_argvs inside lg_code_argvs parsed
    -- the JSON four times: classifier_calls 0.10 -> 0.21 CPU s on a 32 MB shard)
    select *, case when not (writer and args_ok) then lg_with_argvs(arguments, args_ok) end as argv_text
    from writers
),
code_texts as (
    select *, case when program then lg_code_argvs(argv_text) end as code_text
    from argv_texts
),
texts as (
    select * exclude (argv_text, code_text),
        case when writer and args_ok then array_to_string(list_transform(resource_args,
            lambda k: coalesce(arguments ->> ('$."' || k || '"'), '')), chr(10))
            when program then lg_line_breaks(code_text)
            else argv_text end as command_text,
        case when program or writer then lg_line_breaks(arguments) else arguments end as arguments_text,
        false as masked  -- set by pipeline/analysis/inert_texts.py
    from code_texts
),
final as (
    select trajectory_id, step_idx, arguments, arguments_text, args_ok, tool_key, catalog_key, writer, masked,
        command_text,
        coalesce(regexp_matches(case when writer or masked then arguments_text else command_text end, $pattern),
                 false) as candidate
    from texts
)
select * from final
