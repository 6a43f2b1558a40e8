//! The part of ONNX's protobuf schema (onnx.proto, IR version 8) that a model graph needs, as
//! prost messages. Field numbers are ONNX's; fields harness never writes are left out, which
//! protobuf allows.

/// `ModelProto`: the file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelProto {
    /// The IR version the file follows.
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    /// Who wrote it.
    #[prost(string, tag = "2")]
    pub producer_name: String,
    /// Its version.
    #[prost(string, tag = "3")]
    pub producer_version: String,
    /// Free text.
    #[prost(string, tag = "6")]
    pub doc_string: String,
    /// The graph.
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    /// The operator sets the nodes are from.
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
}

/// `OperatorSetIdProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OperatorSetIdProto {
    /// Empty for the default domain (`ai.onnx`).
    #[prost(string, tag = "1")]
    pub domain: String,
    /// Opset version.
    #[prost(int64, tag = "2")]
    pub version: i64,
}

/// `GraphProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GraphProto {
    /// Nodes, in topological order.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    /// Graph name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Constant tensors (weights).
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    /// Inputs fed at run time.
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    /// Outputs.
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
}

/// `NodeProto`: one operator application.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeProto {
    /// Input value names (an empty one skips an optional input).
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    /// Output value names.
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    /// Node name.
    #[prost(string, tag = "3")]
    pub name: String,
    /// Operator (`MatMul`).
    #[prost(string, tag = "4")]
    pub op_type: String,
    /// Attributes.
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
}

/// `AttributeProto`, the kinds harness writes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// A float.
    #[prost(float, tag = "2")]
    pub f: f32,
    /// An integer.
    #[prost(int64, tag = "3")]
    pub i: i64,
    /// Integers.
    #[prost(int64, repeated, tag = "8")]
    pub ints: Vec<i64>,
    /// Which of the fields holds the value ([`AttributeType`]).
    #[prost(int32, tag = "20")]
    pub r#type: i32,
}

/// `AttributeProto.AttributeType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum AttributeType {
    /// `f`.
    Float = 1,
    /// `i`.
    Int = 2,
    /// `ints`.
    Ints = 7,
}

/// `TensorProto`: an initializer.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    /// Shape.
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    /// Element type ([`DataType`]).
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    /// Name.
    #[prost(string, tag = "8")]
    pub name: String,
    /// Elements, little-endian, row-major.
    #[prost(bytes = "vec", tag = "9")]
    pub raw_data: Vec<u8>,
}

/// `TensorProto.DataType`, the types harness writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum DataType {
    /// f32.
    Float = 1,
    /// i32.
    Int32 = 6,
    /// i64.
    Int64 = 7,
}

/// `ValueInfoProto`: a graph input's or output's name and type.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueInfoProto {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Type.
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
}

/// `TypeProto`, a tensor's.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeProto {
    /// The tensor type (the `value` oneof's only case harness writes).
    #[prost(message, optional, tag = "1")]
    pub tensor_type: Option<TensorTypeProto>,
}

/// `TypeProto.Tensor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorTypeProto {
    /// Element type ([`DataType`]).
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    /// Shape.
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

/// `TensorShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    /// Dimensions.
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

/// `TensorShapeProto.Dimension`, a fixed size.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Dimension {
    /// The size.
    #[prost(int64, tag = "1")]
    pub dim_value: i64,
}
