-- events: one row per event of an accepted trajectory, calls paired with their
-- results (grain: trajectory_id, step_idx). The first half of stage `steps`: the
-- policy's regex rules run on it next (sql/*_hits.sql), then sql/steps.sql finishes.
-- Inputs: trajectories (accepted rows have no reject_reason), records (their text).
-- Parameters: none.
-- Explode order (SPEC section 2): messages in order; an assistant message gives its
-- text (only when non-blank) then its tool calls in order; a tool message one result.
with traj as (
    -- keyed by record_id from here on, not by trajectory_id: one accepted record per id
    -- (later copies are rejected), and the joins and windows below hash and sort an
    -- integer cheaper than the id's text
    select t.record_id, t.trajectory_id, t.suite, r.text
    from trajectories t join records r using (record_id)
    where t.reject_reason is null
),
msgs as (
    select record_id, trajectory_id, suite, unnest(l) as m, (generate_subscripts(l, 1) - 1)::bigint as message_idx
    -- the record is parsed once for every message field the later CTEs read. Typed where
    -- trajectories made the type certain: every role is a string, every tool_calls a list
    -- or null, every call an object (a JSON null, as a missing key, arrives as SQL null)
    from (select record_id, trajectory_id, suite, json_transform(text, '{"messages": [{"role": "VARCHAR",
              "content": "JSON", "tool_calls": [{"id": "JSON", "call_id": "JSON", "name": "JSON",
              "arguments": "JSON", "depends_on": "JSON", "function": "JSON"}],
              "tool_call_id": "JSON", "tool_use_id": "JSON", "error": "JSON"}]}').messages as l
          from traj)
),
messages as materialized (
    -- materialized: message_numbers, message_steps and call_steps all read it
    select
        record_id, trajectory_id, suite, message_idx,
        -- a `function` message is the result of an OpenAI legacy `function_call`
        -- (pipeline/ingest/adapters/legacy_calls.py), an `ipython` one Llama 3's tool output:
        -- a tool's output (untrusted), never operator text
        case when lower(m.role) in ('function', 'ipython') then 'tool' else lower(m.role) end as role,
        -- content may be a string, a list of text parts, null, or (hostile) any JSON; the
        -- type is the JSON text's first character (JSON values come minified: a string
        -- starts with '"', an array with '['), not a new parse. A Cohere v2 tool result's
        -- part is a document: its `data` (a string as is, an object as JSON text) is the
        -- text (read only for parts without text or content: coalesce stops at the first)
        case
            when starts_with(m.content, '"') then m.content ->> '$'
            when starts_with(m.content, '[') then array_to_string(list_transform(
                cast(json_extract(m.content, '$[*]') as json[]),
                lambda p: coalesce(p ->> '$.text', p ->> '$.content', p ->> '$.document.data',
                    case when json_type(p) = 'VARCHAR' then p ->> '$' end)), chr(10))
            else m.content::varchar
        end as content,
        m.tool_calls as calls,
        coalesce(m.tool_call_id ->> '$', m.tool_use_id ->> '$') as answers_id,
        m.error as error_field
    from msgs
),
message_numbers as (
    -- per message: the step_idx of its first step and the user/system messages up to it (a
    -- retry chain never spans one). A window over these narrow rows, joined back below,
    -- instead of one over every step with its content (a window sorts all it is given)
    select
        record_id, message_idx, has_text, n_calls,
        sum(has_text::int + n_calls) over w - (has_text::int + n_calls) as first_step,
        sum(case when role is not null and role not in ('assistant', 'tool') then 1 else 0 end) over w
            as n_user_before
    from (select
              record_id, message_idx, role,
              -- a message gives its own step unless it is a blank assistant text (SPEC
              -- section 2): blank is whitespace only, the characters Python's str.isspace
              -- counts (ASCII whitespace, \x1c-\x1f, U+0085, Unicode separators), so "\n\n"
              -- before a tool call is no step (DuckDB's trim strips spaces, not newlines)
              case when role is null then false when role <> 'assistant' then true
                   else not regexp_full_match(coalesce(content, ''),
                                              '[\t\n\x{0b}\f\r\x{1c}-\x{1f}\x{85}\p{Z}]*') end as has_text,
              case when role = 'assistant' then coalesce(len(calls), 0) else 0 end as n_calls
          from messages)
    window w as (partition by record_id order by message_idx rows unbounded preceding)
),
message_steps as (
    select
        record_id, trajectory_id, suite, message_idx, 0 as sub,
        case
            when role = 'user' then 'user'
            when role = 'assistant' then 'assistant_text'
            when role = 'tool' then 'tool_result'
            else 'system'  -- system, developer and any other role speak for the operator
        end as kind,
        role, content, null::json[] as call, answers_id, error_field,
        n.first_step::bigint as step_idx, n.n_user_before
    -- the filter on the narrow side: the join builds on it, the messages stream past
    from messages join (select * from message_numbers where has_text) n using (record_id, message_idx)
),
call_steps as (
    select
        record_id, trajectory_id, suite, message_idx, sub, 'tool_call' as kind, role, null::varchar as content,
        -- [function.name, name, id, call_id, function.arguments, arguments, depends_on]:
        -- `function` (any JSON) is parsed once more, on its own; a JSON null that arrived as
        -- SQL null reads as a missing key below (->> gives null for both; a null
        -- `arguments` ends as '{}' either way)
        [fn[1], c.name, c.id, c.call_id, fn[2], c.arguments, c.depends_on] as call,
        null::varchar as answers_id, null::json as error_field,
        (n.first_step + n.has_text::int + sub - 1)::bigint as step_idx, n.n_user_before
    from (select *, json_extract(c.function, ['$.name', '$.arguments']) as fn
          from (select record_id, trajectory_id, suite, message_idx, role, unnest(calls) as c,
                       generate_subscripts(calls, 1)::bigint as sub
                from messages
                where role = 'assistant' and calls is not null))
    join (select * from message_numbers where n_calls > 0) n using (record_id, message_idx)
),
numbered as (
    select * from message_steps
    union all
    select * from call_steps
),
call_fields as (
    select
        *,
        case when kind = 'tool_call' then coalesce(call[1] ->> '$', call[2] ->> '$') end as tool_name,
        case
            when kind = 'tool_call' then coalesce(call[3] ->> '$', call[4] ->> '$')
            when kind = 'tool_result' then answers_id
        end as call_id,
        case when kind = 'tool_call' then coalesce(call[5], call[6]) end as args_raw,
        -- arguments given as a JSON string: its text, unescaped once (JSON values from
        -- json_extract come minified, so the first character is the type: no new parse)
        case when kind = 'tool_call' and starts_with(coalesce(call[5], call[6]), '"')
            then coalesce(call[5], call[6]) ->> '$' end as args_string,
        case when kind = 'tool_call' and starts_with(call[7], '[')
            then cast(json_extract_string(call[7], '$[*]') as varchar[]) end as depends_on,
        case when kind = 'tool_result' then error_field end as error_raw
    from numbered
),
args_read as (
    select
        *,
        -- arguments arrive as a JSON object or a string holding one; both end as JSON text
        case
            when kind <> 'tool_call' then null
            when args_raw is null or args_raw = 'null' then '{}'
            when starts_with(args_raw, '{') then json(args_raw)::varchar
            when args_string is null then null  -- a number, boolean or list is no arguments
            -- valid JSON whose first non-blank character (JSON blanks: space, tab, LF, CR)
            -- is '{' is an object: no json_type parse. Text starting with '{' first (most
            -- arguments): it is not blank, so the trim test below need not copy it
            when starts_with(args_string, '{') then case when json_valid(args_string)
                then json(args_string)::varchar end
            when trim(args_string) = '' then '{}'
            when regexp_matches(args_string, '^[ \t\n\r]+\{') and json_valid(args_string)
                then json(args_string)::varchar
        end as args_json,
        case when kind = 'tool_call' then coalesce(args_string, args_raw::varchar) end as args_text
    from call_fields
),
args_parsed as (
    -- NaN / Infinity as a number is not JSON (RFC 8259) though DuckDB's reader takes it:
    -- such arguments are no JSON object (the reader rejects the words in a record's own
    -- JSON; inside a string of arguments, or spelt in lower case, they reach here)
    select * replace (case when lg_non_finite(args_json) then null else args_json end as args_json)
    from args_read
),
results as (
    select
        record_id, step_idx as result_step_idx, call_id, content as result_content,
        -- the error's type is its JSON text's first character (a JSON null is SQL null)
        case when starts_with(error_raw, '{') then error_raw ->> '$.type' end as err_type,
        case
            when starts_with(error_raw, '{') then coalesce(error_raw ->> '$.message', error_raw::varchar)
            when starts_with(error_raw, '"') then nullif(error_raw ->> '$', '')
            when error_raw::varchar in ('true', 'false') then case when error_raw::varchar = 'true' then 'error' end
            else error_raw::varchar
        end as err_message
    from args_parsed
    where kind = 'tool_result'
),
idless as (
    -- calls that carry no id and results that name none: Hugging Face chat templates (and
    -- the open-weight agents logged through them) write tool calls without ids and answer
    -- them in order, so the k-th such result of a trajectory answers its k-th such call
    -- when it comes after it; else it stays an orphan, as any result without its call.
    -- Narrow rows, joined back by step: an ordinary record has none
    select record_id, step_idx, kind, row_number() over (partition by record_id, kind order by step_idx) as k
    from args_parsed
    where kind in ('tool_call', 'tool_result') and call_id is null
),
idless_pairs as (
    -- both steps of a pair get the id '#<the call's step_idx>'
    select c.record_id, unnest([c.step_idx, r.step_idx]) as step_idx, '#' || c.step_idx as call_id
    from idless c
    join idless r on r.record_id = c.record_id and r.k = c.k and r.kind = 'tool_result'
    where c.kind = 'tool_call' and r.step_idx > c.step_idx
),
paired_ids as (
    -- each call and result with the id it pairs by
    select a.record_id, a.step_idx, a.kind, a.tool_name, coalesce(a.call_id, p.call_id) as call_id
    from args_parsed a
    left join idless_pairs p using (record_id, step_idx)
    where a.kind in ('tool_call', 'tool_result')
),
links as (
    -- calls and results paired in one window over narrow rows (a window sorts every
    -- column it is given): the calls and results of one id in step order. A result
    -- answers the latest earlier call with its id (a join of every earlier call of the
    -- id, keeping the latest, grew with calls x results of one id: ids repeat in hostile
    -- input, and 20,000 calls of one id, a 4.9 MB record, cost 18 s here); a call takes
    -- the first result that answers it, the row right after it in this order when that
    -- is a result (later ones are orphans). The latest call is a struct, its step first,
    -- so its name comes with it: no join back to the call's row
    select
        record_id, step_idx, call_id,
        case when not is_call then max({'step_idx': step_idx, 'tool_name': tool_name})
            filter (where is_call) over (w rows unbounded preceding) end as answers,
        case when not is_call then coalesce(lag(is_call) over w, false) end as first_answer,
        case when is_call and not lead(is_call) over w then lead(step_idx) over w end as answer_step_idx
    from (select record_id, step_idx, call_id, tool_name, kind = 'tool_call' as is_call
          from paired_ids
          where kind = 'tool_result' or call_id is not null)
    window w as (partition by record_id, call_id order by step_idx)
),
final as (
    select
        s.trajectory_id, s.step_idx, s.suite, s.message_idx, s.kind,
        coalesce(s.tool_name, l.answers.tool_name) as tool_name, coalesce(s.call_id, l.call_id) as call_id,
        coalesce(s.args_json, s.args_text) as arguments,
        case when s.kind = 'tool_call' then s.args_json is not null end as args_ok,
        s.content, s.depends_on, s.n_user_before,
        case when s.kind = 'tool_result' then l.answers.step_idx end as call_step_idx,
        case when s.kind = 'tool_result' then l.first_answer end as answered,
        -- on a call row: what its result says (the rules read these)
        r.result_step_idx, r.result_content, r.err_type, r.err_message
    from args_parsed s
    left join links l on l.record_id = s.record_id and l.step_idx = s.step_idx
    left join results r on r.record_id = s.record_id and r.result_step_idx = l.answer_step_idx
)
select * from final
