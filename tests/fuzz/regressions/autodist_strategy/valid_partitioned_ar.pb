
partitioned_ar^
layer.0.fc.weight:0"2,1* 
layer.0.fc.weight/part_0:0* 
layer.0.fc.weight/part_1:0V
layer.0.fc.bias:0"2*
layer.0.fc.bias/part_0:0*
layer.0.fc.bias/part_1:0^
layer.1.fc.weight:0"2,1* 
layer.1.fc.weight/part_0:0* 
layer.1.fc.weight/part_1:0V
layer.1.fc.bias:0"2*
layer.1.fc.bias/part_0:0*
layer.1.fc.bias/part_1:0^
layer.2.fc.weight:0"2,1* 
layer.2.fc.weight/part_0:0* 
layer.2.fc.weight/part_1:0V
layer.2.fc.bias:0"2*
layer.2.fc.bias/part_0:0*
layer.2.fc.bias/part_1:0^
layer.3.fc.weight:0"2,1* 
layer.3.fc.weight/part_0:0* 
layer.3.fc.weight/part_1:0V
layer.3.fc.bias:0"2*
layer.3.fc.bias/part_0:0*
layer.3.fc.bias/part_1:0"Ð
node0:GPU:0
node0:GPU:1
node0:GPU:2
node0:GPU:3
node1:GPU:0
node1:GPU:1
node1:GPU:2
node1:GPU:3
node2:GPU:0
node2:GPU:1
node2:GPU:2
node2:GPU:3
node3:GPU:0
node3:GPU:1
node3:GPU:2
node3:GPU:3