"""mutate.py IN OUT KEY VALUE: copies the JSON config IN to OUT with KEY
(a dotted path such as text_config.head_dim) set to VALUE (parsed as JSON),
for the bad-input tests."""
import json
import sys

source, dest, key, value = sys.argv[1:5]
with open(source) as f:
    config = json.load(f)
*parents, last = key.split(".")
node = config
for name in parents:
    node = node[name]
node[last] = json.loads(value)
with open(dest, "w") as f:
    json.dump(config, f, indent=1)
