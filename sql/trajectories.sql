-- trajectories: one row per input record (grain: record_id).
-- Inputs: records (record_id, source_file, source_line, text, reject_reason,
--         reject_detail, fmt) registered from the reader.
--         prior_copies (trajectory_id, n): scorable copies of an id in earlier shards
--         (empty for a single shard), so copy numbers count across the whole input.
-- Parameters: none.
-- Decides the record-level reject reasons of SPEC section 3, first that applies:
-- malformed_record (and record_too_large from the reader), missing_trajectory_id,
-- duplicate_trajectory_id, empty_trajectory. Later stages add the step-level ones.
-- Carries no record text: events reads accepted records' text from `records` by
-- record_id, so the shard's text is held once, not twice.
with parsed as (
    select
        record_id, source_file, source_line, fmt, text, reject_reason, reject_detail,
        -- one parse of the record (each JSON function parses anew) for every field this
        -- stage reads: the head fields, each message's role and tool_calls, as JSON values
        -- (a JSON null arrives as SQL null; a message that is not an object gives nulls).
        -- try: a text that is not JSON gives null here instead of a separate json_valid
        -- parse of every record (the same reader flags accept the same texts)
        case when reject_reason is null then try(json_transform(text, '{"trajectory_id": "JSON",
            "suite": "JSON", "meta": "JSON", "parent_trajectory_id": "JSON", "parent_call_id": "JSON",
            "messages": [{"role": "JSON", "tool_calls": "JSON"}]}')) end as doc
    from records
),
checked as (
    select
        *,
        -- a null doc is either no JSON or the JSON text null: only those rare texts are
        -- parsed again to tell which (a CASE: DuckDB may evaluate both sides of an OR)
        case when reject_reason is not null then false when doc is not null then true
             else json_valid(text) end as is_json
    from parsed
),
typed as (
    select
        *,
        -- valid JSON starting with '{' is an object; any other text (leading blanks too)
        -- asks json_type, which parses it again (rare). Valid JSON with no doc is the JSON
        -- null; any other would be an engine failure that try hid: stop, never misfile it
        case when not is_json then null
             -- nested: DuckDB may evaluate the parts of an AND in any order
             when doc is null then case when json_type(text) = 'NULL' then 'NULL'
                 else error('trajectories: json_transform failed on valid JSON') end
             when starts_with(text, '{') then 'OBJECT' else json_type(text) end
            as doc_type
    from checked
),
shapes as (
    select
        *,
        -- messages is a list exactly when it is a JSON array; only a record without one
        -- asks what it is instead (null, missing or another type: a reject detail)
        case when doc_type = 'OBJECT' and doc.messages is not null then 'ARRAY'
             when doc_type = 'OBJECT' then json_type(text, '$.messages') end as messages_type,
        case when doc_type = 'OBJECT' then doc.messages end as shape
    from typed
),
counted as (
    select *, coalesce(len(shape), 0) as n_messages from shapes
),
fields as (
    select
        *,
        -- a JSON null id arrives as SQL null: only then ask the record whether the field is
        -- there at all (the reject detail tells the two apart)
        case when doc.trajectory_id is not null then json_type(doc.trajectory_id)
             when doc_type = 'OBJECT' then json_type(text, '$.trajectory_id') end as id_type,
        json_type(doc.suite) as suite_type
    from counted
),
shaped as (
    select
        *,
        -- ids may be strings or integers (a number is kept in its decimal text);
        -- anything else cannot identify a trajectory
        case
            when id_type = 'VARCHAR' then nullif(doc.trajectory_id ->> '$', '')
            when id_type in ('BIGINT', 'UBIGINT') then doc.trajectory_id ->> '$'
            -- an integer too large for 64 bits parses as DOUBLE; its digits are still an id
            when id_type = 'DOUBLE' and regexp_full_match(doc.trajectory_id ->> '$', '-?[0-9]+')
                then doc.trajectory_id ->> '$'
        end as trajectory_id,
        case
            when suite_type is null or suite_type = 'NULL' then 'default'
            when suite_type in ('VARCHAR', 'BIGINT', 'UBIGINT', 'DOUBLE', 'BOOLEAN')
                then coalesce(nullif(doc.suite ->> '$', ''), 'default')
        end as suite,
        case when json_type(doc.meta) = 'OBJECT' then json(doc.meta) end as meta,
        -- a subagent's parent (claude-code): strings only; anything else is no link
        case when json_type(doc.parent_trajectory_id) = 'VARCHAR' then nullif(doc.parent_trajectory_id ->> '$', '') end as parent_trajectory_id,
        case when json_type(doc.parent_call_id) = 'VARCHAR' then nullif(doc.parent_call_id ->> '$', '') end as parent_call_id,
        -- the first malformed message (not an object, no role, tool_calls not a list, a
        -- tool call without a name): decided here, before the id checks (SPEC order)
        case when messages_type = 'ARRAY' and not coalesce((
            -- quick, sound test first (on the shapes, no new parse of the record): every
            -- message has a string role, every tool_calls is a list or null, every call has
            -- a function.name; only records failing it pay for the per-message list below
            -- (it copies every message: memory). JSON values come minified, so a value's
            -- first character is its type (a JSON null is SQL null): no json_type parse.
            -- One pass over the messages, and each tool_calls list read once (a typed
            -- transform: a call that is no object, or has no function object with a
            -- non-null name, gets a null name; the first of duplicate keys counts, as for
            -- json_extract below), not three filters and two parses of each list
            n_messages = 0 or list_bool_and(list_transform(shape, lambda m:
                coalesce(starts_with(m.role, '"'), false)
                and case when m.tool_calls is null then true
                         when starts_with(m.tool_calls, '[') then len(list_filter(
                             json_transform(m.tool_calls, '[{"function": {"name": "JSON"}}]'),
                             lambda c: c.function.name is null)) = 0
                         else false end))
        ), false) then list_position(
            list_transform(cast(json_extract(text, '$.messages[*]') as json[]), lambda m:
                -- also true when m is not an object: a path into a non-object is null
                json_type(m, '$.role') is distinct from 'VARCHAR'
                or coalesce(json_type(m, '$.tool_calls') not in ('ARRAY', 'NULL'), false)
                or coalesce(list_bool_or(list_transform(
                       cast(json_extract(m, '$.tool_calls[*]') as json[]),
                       lambda c: coalesce(c ->> '$.function.name', c ->> '$.name') is null)), false)),
            true) end as bad_message
    from fields
),
record_reason as (
    select
        *,
        case
            when reject_reason is not null then reject_reason
            when not is_json then 'malformed_record'
            when doc_type <> 'OBJECT' then 'malformed_record'
            when suite is null then 'malformed_record'
            when messages_type is not null and messages_type not in ('ARRAY', 'NULL')
                then 'malformed_record'
            when bad_message is not null then 'malformed_record'
            when trajectory_id is null then 'missing_trajectory_id'
        end as reason0,
        case
            when reject_reason is not null then reject_detail
            when not is_json then 'not parseable as JSON'
            when doc_type <> 'OBJECT' then 'a record must be a JSON object, got ' || lower(doc_type)
            when suite is null then 'suite must be a string, got ' || lower(suite_type)
            when messages_type is not null and messages_type not in ('ARRAY', 'NULL')
                then 'messages must be an array, got ' || lower(messages_type)
            when bad_message is not null then 'message ' || (bad_message - 1)
                || ' is not an object with a role and named tool calls'
            when trajectory_id is null and id_type is null then 'no trajectory_id field'
            when trajectory_id is null then 'trajectory_id must be a non-empty string or an integer, got ' || lower(id_type)
        end as detail0
    from shaped
),
numbered as (
    select
        r.*,
        -- the first copy of an id (in input order) is scored; every later copy is attrition;
        -- copies in earlier shards come first (shards are contiguous in input order)
        case when reason0 is null
            then row_number() over (partition by r.trajectory_id, reason0 is null order by record_id)
                 + coalesce(p.n, 0)
        end as copy_no
    from record_reason r
    left join prior_copies p on reason0 is null and p.trajectory_id = r.trajectory_id
),
final as (
    select
        record_id, source_file, source_line, fmt, trajectory_id,
        coalesce(suite, 'default') as suite, meta, parent_trajectory_id, parent_call_id,
        case
            when reason0 is not null then reason0
            when copy_no > 1 then 'duplicate_trajectory_id'
            when n_messages = 0 then 'empty_trajectory'
        end as reject_reason,
        case
            when reason0 is not null then detail0
            when copy_no > 1 then 'copy ' || copy_no || ' of trajectory_id ' || trajectory_id
            when n_messages = 0 then 'no messages'
        end as reject_detail
    from numbered
)
select * from final
