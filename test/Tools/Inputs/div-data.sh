# div-data.sh PYTHON SRC DIR: DIR/input_0.pb and input_1.pb for div.onnxtext
# (X / Y with X/0 for X = 1, -1, 0: +Inf, -Inf, NaN, then finite values).
set -e
mkdir -p "$3"
"$1" "$2/pb.py" "$3/input_0.pb" 'dims(8) + dtype(1) + name("X") + raw(struct.pack("<8f", 1, -1, 0, 2, 3, 0, 5, 6))'
"$1" "$2/pb.py" "$3/input_1.pb" 'dims(8) + dtype(1) + name("Y") + raw(struct.pack("<8f", 0, 0, 0, 1, 1, 4, 2, -2))'
