-- An offer serves a request's features for a model when its offer_models row supports every feature the request
-- uses (tools, json_schema structured outputs, image inputs).
CREATE OR REPLACE FUNCTION "svc_offer_model_serves"(
  p_supports_tools boolean,
  p_supports_json_schema boolean,
  p_supports_vision boolean,
  p_tools boolean,
  p_json_schema boolean,
  p_vision boolean
) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT (NOT p_tools OR p_supports_tools) AND (NOT p_json_schema OR p_supports_json_schema)
     AND (NOT p_vision OR p_supports_vision)
$$;
